#include "t.h"
int main(void) { CHECK(0, "not written yet"); return t_done("u-warc"); }
