"""site_files.py: writing a generated one-host test site (toc_site.py,
hops_site.py): its files under the host's document root, and URL lists
beside it."""
import os


def write_files(root, files):
    """files: path under root -> text; directories made as needed."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def write_list(path, lines):
    """One line per item of lines (each without its newline)."""
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))
