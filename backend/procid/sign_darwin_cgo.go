//go:build darwin && cgo

package procid

/*
#cgo LDFLAGS: -framework Security -framework CoreFoundation
#include <Security/Security.h>
#include <string.h>

// yett_cfstr copies a CFString into buf (empty when s is NULL).
static void yett_cfstr(CFStringRef s, char *buf, size_t len) {
	buf[0] = 0;
	if (s != NULL) {
		CFStringGetCString(s, buf, (CFIndex)len, kCFStringEncodingUTF8);
	}
}

// yett_code_signer checks the dynamic (running) code of pid and writes its
// designated requirement, or the reason it has none, into req, and its
// team identifier into team. Returns 0 when signed and valid, 1 when
// unsigned or invalid, -1 when the process could not be examined.
static int yett_code_signer(int pid, char *req, size_t reqlen, char *team, size_t teamlen) {
	req[0] = 0;
	team[0] = 0;
	CFNumberRef pidNum = CFNumberCreate(NULL, kCFNumberIntType, &pid);
	const void *keys[] = { kSecGuestAttributePid };
	const void *vals[] = { pidNum };
	CFDictionaryRef attrs = CFDictionaryCreate(NULL, keys, vals, 1,
		&kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks);
	SecCodeRef code = NULL;
	OSStatus st = SecCodeCopyGuestWithAttributes(NULL, attrs, kSecCSDefaultFlags, &code);
	CFRelease(attrs);
	CFRelease(pidNum);
	if (st != errSecSuccess || code == NULL) {
		return -1;
	}
	if (SecCodeCheckValidity(code, kSecCSDefaultFlags, NULL) != errSecSuccess) {
		CFRelease(code);
		return 1;
	}
	SecRequirementRef dr = NULL;
	if (SecCodeCopyDesignatedRequirement(code, kSecCSDefaultFlags, &dr) == errSecSuccess && dr != NULL) {
		CFStringRef text = NULL;
		if (SecRequirementCopyString(dr, kSecCSDefaultFlags, &text) == errSecSuccess) {
			yett_cfstr(text, req, reqlen);
			CFRelease(text);
		}
		CFRelease(dr);
	}
	CFDictionaryRef info = NULL;
	if (SecCodeCopySigningInformation((SecStaticCodeRef)code, kSecCSSigningInformation, &info) == errSecSuccess && info != NULL) {
		CFStringRef t = (CFStringRef)CFDictionaryGetValue(info, kSecCodeInfoTeamIdentifier);
		yett_cfstr(t, team, teamlen);
		CFRelease(info);
	}
	CFRelease(code);
	return 0;
}
*/
import "C"

import "unsafe"

// codeSigner asks the Security framework about the running code of pid
// (not the file at path, which may have been replaced since launch) and
// returns its designated requirement and team, SignerUnsigned, or
// SignerNotChecked when the process could not be examined.
func codeSigner(pid int, _ string) string {
	var req [2048]C.char
	var team [128]C.char
	switch C.yett_code_signer(C.int(pid), &req[0], C.size_t(len(req)), &team[0], C.size_t(len(team))) {
	case 0:
		s := C.GoString((*C.char)(unsafe.Pointer(&req[0])))
		if t := C.GoString((*C.char)(unsafe.Pointer(&team[0]))); t != "" {
			s = "team " + t + ": " + s
		}
		return sanitize(s, 512)
	case 1:
		return SignerUnsigned
	default:
		return SignerNotChecked
	}
}
