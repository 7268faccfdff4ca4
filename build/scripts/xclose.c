/* xclose WINDOW_ID: asks an X window to close as a window manager's close
 * button does (a WM_PROTOCOLS client message carrying WM_DELETE_WINDOW), so
 * the window test can close Yett's window under a bare Xvfb that has no
 * window manager. Built by window-test.sh with the C compiler and libX11
 * the desktop build already needs. */
#include <stdio.h>
#include <stdlib.h>
#include <X11/Xlib.h>

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: xclose WINDOW_ID\n");
		return 2;
	}
	Display *d = XOpenDisplay(NULL);
	if (!d) {
		fprintf(stderr, "xclose: cannot open the display\n");
		return 1;
	}
	Window w = (Window)strtoul(argv[1], NULL, 0);
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = (long)XInternAtom(d, "WM_DELETE_WINDOW", False);
	ev.xclient.data.l[1] = CurrentTime;
	if (!XSendEvent(d, w, False, NoEventMask, &ev)) {
		fprintf(stderr, "xclose: the event was not sent\n");
		return 1;
	}
	XSync(d, False);
	XCloseDisplay(d);
	return 0;
}
