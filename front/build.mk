# front: mt, the porcelain (record, report, flame, diff) over the stage
# programs, which it finds beside itself (see GNUmakefile).
FRONT_OBJS := \
	$(B)/obj/front/archive.o \
	$(B)/obj/front/dispatch.o \
	$(B)/obj/front/flame.o \
	$(B)/obj/front/fold.o \
	$(B)/obj/front/html.o \
	$(B)/obj/front/record.o \
	$(B)/obj/front/report.o \
	$(B)/obj/front/run.o \
	$(B)/obj/front/unwound.o

$(B)/bin/mt: $(B)/obj/front/main.o $(FRONT_OBJS) $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lzstd $(LDLIBS)

BINS += $(B)/bin/mt

E2E_TESTS += tests/e2e/front-record-report.sh
E2E_TESTS += tests/e2e/front-real.sh
E2E_TESTS += tests/e2e/front-html.sh
BENCHES += bench/front.sh
BENCHES += bench/html.sh
MANPAGES += docs/man/mt.1
MANPAGES += docs/man/mt-html.1

# mt-html: the HTML report's writer (python3, standard library), with its
# page template (scripts/mt-html.html) embedded at build time.
$(B)/bin/mt-html: scripts/mt-html scripts/mt-html.html scripts/embed-template.py
	@mkdir -p $(@D)
	python3 scripts/embed-template.py scripts/mt-html scripts/mt-html.html $@.tmp
	chmod 755 $@.tmp
	mv $@.tmp $@

BINS += $(B)/bin/mt-html
