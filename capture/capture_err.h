/* How the capture library reports errors: functions return 0 or -1 with a
 * message (git style, no program prefix) in err[MT_CAPTURE_ERRLEN], or one
 * of the codes below. */
#ifndef MT_CAPTURE_ERR_H
#define MT_CAPTURE_ERR_H

#define MT_CAPTURE_ERRLEN 512

enum {
	MT_CAPTURE_EPERM = -2,		/* perf_event_open denied */
	MT_CAPTURE_ENOEXEC = -3,	/* the command could not be run */
	MT_CAPTURE_EWRITE = -4,		/* the output failed */
	MT_CAPTURE_EUSAGE = -5,		/* an event name that names none */
};

#endif
