# --sites on a C++ capture (fold_sites_cxx): sites past operator new, std::
COLUMNS=80 mt-fold --sites "$MT_SRC/tests/cli/mt-fold/sites-cxx-input.txt"
