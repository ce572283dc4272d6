# symbolize: sources, binaries and tests of this stage (see GNUmakefile).
