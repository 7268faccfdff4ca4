//go:build darwin && cgo

// Objective-C half of usernotifications_darwin.go. Manual reference
// counting, as lockwatch_darwin.m, so no ARC flag has to reach the C files
// cgo generates.

#import <Foundation/Foundation.h>
#import <UserNotifications/UserNotifications.h>
#include <stdint.h>
#include <stdbool.h>
#include "_cgo_export.h"

static NSString *const kApprovalCategory = @"dev.yett.approval";
static NSString *const kOpenCategory = @"dev.yett.open";
static NSString *const kApprove = @"dev.yett.approve";
static NSString *const kDeny = @"dev.yett.deny";

// 0 unknown, 1 allowed, 2 denied; written from the framework's queues.
static volatile int authorization = 0;

@interface YettNotifyDelegate : NSObject <UNUserNotificationCenterDelegate>
@end

@implementation YettNotifyDelegate
// Shown as a banner even while Yett's window is in front.
- (void)userNotificationCenter:(UNUserNotificationCenter *)center
       willPresentNotification:(UNNotification *)notification
         withCompletionHandler:(void (^)(UNNotificationPresentationOptions))completionHandler {
	completionHandler(UNNotificationPresentationOptionBanner | UNNotificationPresentationOptionList |
	                  UNNotificationPresentationOptionSound);
}

- (void)userNotificationCenter:(UNUserNotificationCenter *)center
    didReceiveNotificationResponse:(UNNotificationResponse *)response
             withCompletionHandler:(void (^)(void))completionHandler {
	NSString *identifier = response.notification.request.identifier;
	goYettNotifyResponse((char *)[identifier UTF8String], (char *)[response.actionIdentifier UTF8String]);
	completionHandler();
}
@end

static YettNotifyDelegate *delegate = nil;

static void refreshAuthorization(void) {
	[[UNUserNotificationCenter currentNotificationCenter]
	    getNotificationSettingsWithCompletionHandler:^(UNNotificationSettings *settings) {
		  switch (settings.authorizationStatus) {
		  case UNAuthorizationStatusAuthorized:
		  case UNAuthorizationStatusProvisional:
			  authorization = 1;
			  break;
		  case UNAuthorizationStatusDenied:
			  authorization = 2;
			  break;
		  default:
			  authorization = 0;
		  }
	    }];
}

int yettNotifyStart(uintptr_t ident) {
	@autoreleasepool {
		// The framework aborts a process that is not an app bundle.
		if ([[NSBundle mainBundle] bundleIdentifier] == nil) {
			return 1;
		}
		UNUserNotificationCenter *center = [UNUserNotificationCenter currentNotificationCenter];
		if (delegate == nil) {
			delegate = [[YettNotifyDelegate alloc] init];
		}
		center.delegate = delegate;
		// Approve asks for the Mac to be unlocked first; Deny is marked
		// destructive. Neither opens the window.
		UNNotificationAction *approve =
		    [UNNotificationAction actionWithIdentifier:kApprove
		                                         title:@"Approve"
		                                       options:UNNotificationActionOptionAuthenticationRequired];
		UNNotificationAction *deny = [UNNotificationAction actionWithIdentifier:kDeny
		                                                                  title:@"Deny"
		                                                                options:UNNotificationActionOptionDestructive];
		UNNotificationCategory *approval =
		    [UNNotificationCategory categoryWithIdentifier:kApprovalCategory
		                                           actions:@[ approve, deny ]
		                                 intentIdentifiers:@[]
		                                           options:UNNotificationCategoryOptionNone];
		UNNotificationCategory *open = [UNNotificationCategory categoryWithIdentifier:kOpenCategory
		                                                                      actions:@[]
		                                                            intentIdentifiers:@[]
		                                                                      options:UNNotificationCategoryOptionNone];
		[center setNotificationCategories:[NSSet setWithObjects:approval, open, nil]];
		[center requestAuthorizationWithOptions:(UNAuthorizationOptionAlert | UNAuthorizationOptionSound)
		                      completionHandler:^(BOOL granted, NSError *error) {
			                    authorization = granted ? 1 : 2;
		                      }];
		refreshAuthorization();
		return 0;
	}
}

int yettNotifyAuthorization(void) {
	refreshAuthorization(); // for the next question; this one gets the last answer
	return authorization;
}

void yettNotifyShow(const char *identifier, const char *title, const char *body, bool answerable) {
	@autoreleasepool {
		UNMutableNotificationContent *content = [[[UNMutableNotificationContent alloc] init] autorelease];
		content.title = [NSString stringWithUTF8String:title];
		content.body = [NSString stringWithUTF8String:body];
		content.categoryIdentifier = answerable ? kApprovalCategory : kOpenCategory;
		content.sound = [UNNotificationSound defaultSound];
		content.threadIdentifier = @"dev.yett.approvals";
		UNNotificationRequest *request =
		    [UNNotificationRequest requestWithIdentifier:[NSString stringWithUTF8String:identifier]
		                                         content:content
		                                         trigger:nil];
		[[UNUserNotificationCenter currentNotificationCenter] addNotificationRequest:request withCompletionHandler:nil];
	}
}

void yettNotifyRemove(const char *identifier) {
	@autoreleasepool {
		NSArray *ids = @[ [NSString stringWithUTF8String:identifier] ];
		UNUserNotificationCenter *center = [UNUserNotificationCenter currentNotificationCenter];
		[center removePendingNotificationRequestsWithIdentifiers:ids];
		[center removeDeliveredNotificationsWithIdentifiers:ids];
	}
}

void yettNotifyStop(void) {
	@autoreleasepool {
		UNUserNotificationCenter *center = [UNUserNotificationCenter currentNotificationCenter];
		if (center.delegate == delegate) {
			center.delegate = nil;
		}
	}
}
