//go:build darwin && cgo

// Objective-C half of lockwatch_darwin.go. Manual reference counting, so no
// ARC flag has to reach the C files cgo generates.

#import <AppKit/AppKit.h>
#include <stdint.h>
#include "_cgo_export.h"

@interface YettLockwatchObserver : NSObject {
	uintptr_t watcherID;
}
- (instancetype)initWithID:(uintptr_t)ident;
@end

@implementation YettLockwatchObserver
- (instancetype)initWithID:(uintptr_t)ident {
	self = [super init];
	if (self != nil) {
		watcherID = ident;
	}
	return self;
}
- (void)willSleep:(NSNotification *)n {
	goLockwatchNotify(watcherID, 1);
}
- (void)screenLocked:(NSNotification *)n {
	goLockwatchNotify(watcherID, 2);
}
- (void)sessionResigned:(NSNotification *)n {
	goLockwatchNotify(watcherID, 3);
}
@end

void *lockwatchStart(uintptr_t ident) {
	@autoreleasepool {
		YettLockwatchObserver *o = [[YettLockwatchObserver alloc] initWithID:ident];
		if (o == nil) {
			return NULL;
		}
		NSNotificationCenter *ws = [[NSWorkspace sharedWorkspace] notificationCenter];
		[ws addObserver:o selector:@selector(willSleep:) name:NSWorkspaceWillSleepNotification object:nil];
		[ws addObserver:o selector:@selector(sessionResigned:) name:NSWorkspaceSessionDidResignActiveNotification object:nil];
		// AppKit suspends distributed notifications while the app is
		// inactive, which is exactly when the screen locks: ask for
		// immediate delivery.
		[[NSDistributedNotificationCenter defaultCenter] addObserver:o
		                                                    selector:@selector(screenLocked:)
		                                                        name:@"com.apple.screenIsLocked"
		                                                      object:nil
		                                          suspensionBehavior:NSNotificationSuspensionBehaviorDeliverImmediately];
		return (void *)o;
	}
}

void lockwatchStop(void *p) {
	@autoreleasepool {
		YettLockwatchObserver *o = (YettLockwatchObserver *)p;
		[[[NSWorkspace sharedWorkspace] notificationCenter] removeObserver:o];
		[[NSDistributedNotificationCenter defaultCenter] removeObserver:o];
		[o release];
	}
}
