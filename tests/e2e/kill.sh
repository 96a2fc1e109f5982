echo "not written yet"; exit 1
