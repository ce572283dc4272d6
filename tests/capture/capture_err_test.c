/* The capture library's error messages (capture/capture_err.c): every code
 * has one, and the subject, detail and errno land in their places. */
#include "capture/capture_err.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

Test(capture_err, every_code_has_a_message)
{
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN];
	for (int code = 0; code > -MT_CAPTURE_ERRORS; code--) {
		cr_expect_str_neq(mt_capture_strerror(code), "unknown error", "code %d", code);
		mt_capture_err_set(&err, code, EIO, "s", "d");
		mt_capture_err_message(&err, msg, sizeof(msg));
		cr_expect(msg[0] && !strchr(msg, '{'), "code %d: '%s'", code, msg);
	}
	cr_expect_str_eq(mt_capture_strerror(-MT_CAPTURE_ERRORS), "unknown error");
	cr_expect_str_eq(mt_capture_strerror(1), "unknown error");
}

Test(capture_err, subject_detail_and_errno_in_their_places)
{
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN];
	cr_assert_eq(mt_capture_err_set(&err, MT_CAPTURE_EOPEN, ENOENT, "/x.so", NULL), MT_CAPTURE_EOPEN);
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot open '/x.so': No such file or directory");
	mt_capture_err_set(&err, MT_CAPTURE_ENOSEGMENT, 0, "/x.so", "malloc");
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "'/x.so': symbol 'malloc' lies in no loadable segment");
	/* {e} without an errno: the detail gives the reason. */
	mt_capture_err_set(&err, MT_CAPTURE_ENOTFOUND, 0, "nosuch", "command not found");
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot run 'nosuch': command not found");
	mt_capture_err_set(&err, MT_CAPTURE_EEVENTOPEN, ENOENT, "cycles", " and the others");
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot open event 'cycles' and the others: No such file or directory");
	cr_expect_eq(mt_capture_err_set(NULL, MT_CAPTURE_ENOMEM, 0, NULL, NULL), MT_CAPTURE_ENOMEM);
}

Test(capture_err, a_short_buffer_is_cut_and_terminated)
{
	struct mt_capture_err err = { 0 };
	char msg[12];
	mt_capture_err_set(&err, MT_CAPTURE_EOPEN, ENOENT, "/a/long/path/name", NULL);
	mt_capture_err_message(&err, msg, sizeof(msg));
	cr_expect_str_eq(msg, "cannot open");
	mt_capture_err_message(&err, msg, 1);
	cr_expect_str_eq(msg, "");
}
