// The tray's start on the main thread (tray_darwin.go says why).
#include <dispatch/dispatch.h>
#include "_cgo_export.h"

static void startOnMain(void *unused) {
	(void)unused;
	yettTrayStartOnMain();
}

void yettTrayDispatchStart(void) {
	dispatch_async_f(dispatch_get_main_queue(), NULL, startOnMain);
}
