# common: helpers every stage uses, depending on nothing of ours (see
# GNUmakefile).  Programs and tests link libmtcommon.a after their other
# libraries.
COMMON_OBJS := \
	$(B)/obj/common/cache_dir.o \
	$(B)/obj/common/cli.o \
	$(B)/obj/common/filekind.o \
	$(B)/obj/common/io.o \
	$(B)/obj/common/prealloc.o \
	$(B)/obj/common/progress.o \
	$(B)/obj/common/self.o \
	$(B)/obj/common/trust.o

$(B)/libmtcommon.a: $(COMMON_OBJS)
LIBS += $(B)/libmtcommon.a
