package procid

import (
	"bytes"
	"unsafe"

	"golang.org/x/sys/windows"
)

// codeSigner verifies the Authenticode signature of the image file with
// WinVerifyTrust and names the signer (the leaf certificate's display
// name). The file is checked, not the mapped image: a running image cannot
// be overwritten on Windows, and Matches notices a rename.
func codeSigner(_ int, path string) string {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return SignerNotChecked
	}
	file := &windows.WinTrustFileInfo{Size: uint32(unsafe.Sizeof(windows.WinTrustFileInfo{})), FilePath: p}
	data := &windows.WinTrustData{
		Size:                            uint32(unsafe.Sizeof(windows.WinTrustData{})),
		UIChoice:                        windows.WTD_UI_NONE,
		RevocationChecks:                windows.WTD_REVOKE_NONE,
		UnionChoice:                     windows.WTD_CHOICE_FILE,
		StateAction:                     windows.WTD_STATEACTION_VERIFY,
		FileOrCatalogOrBlobOrSgnrOrCert: unsafe.Pointer(file),
	}
	verr := windows.WinVerifyTrustEx(windows.InvalidHWND, &windows.WINTRUST_ACTION_GENERIC_VERIFY_V2, data)
	data.StateAction = windows.WTD_STATEACTION_CLOSE
	windows.WinVerifyTrustEx(windows.InvalidHWND, &windows.WINTRUST_ACTION_GENERIC_VERIFY_V2, data)
	if verr != nil {
		return SignerUnsigned
	}
	if name := leafSubject(p); name != "" {
		return "Authenticode: " + sanitize(name, maxName*2)
	}
	return "Authenticode: valid (signer name unavailable)"
}

// leafSubject returns the display name of the certificate in the file's
// embedded signature that issued no other certificate there: the signer.
func leafSubject(path *uint16) string {
	var store windows.Handle
	var enc, ctype, ftype uint32
	err := windows.CryptQueryObject(windows.CERT_QUERY_OBJECT_FILE, unsafe.Pointer(path),
		windows.CERT_QUERY_CONTENT_FLAG_PKCS7_SIGNED_EMBED, windows.CERT_QUERY_FORMAT_FLAG_BINARY,
		0, &enc, &ctype, &ftype, &store, nil, nil)
	if err != nil {
		return ""
	}
	defer windows.CertCloseStore(store, 0)
	var certs []*windows.CertContext
	for c, _ := windows.CertEnumCertificatesInStore(store, nil); c != nil; c, _ = windows.CertEnumCertificatesInStore(store, c) {
		certs = append(certs, windows.CertDuplicateCertificateContext(c))
	}
	defer func() {
		for _, c := range certs {
			windows.CertFreeCertificateContext(c)
		}
	}()
	for _, c := range certs {
		issuer := false
		for _, o := range certs {
			if o != c && bytes.Equal(blob(c.CertInfo.Subject), blob(o.CertInfo.Issuer)) {
				issuer = true
				break
			}
		}
		if !issuer {
			buf := make([]uint16, 256)
			n := windows.CertGetNameString(c, windows.CERT_NAME_SIMPLE_DISPLAY_TYPE, 0, nil, &buf[0], uint32(len(buf)))
			if n > 1 {
				return windows.UTF16ToString(buf[:n-1])
			}
		}
	}
	return ""
}

func blob(b windows.CertNameBlob) []byte {
	if b.Size == 0 || b.Data == nil {
		return nil
	}
	return unsafe.Slice(b.Data, b.Size)
}
