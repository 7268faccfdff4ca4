package credimport

// 1Password 8's CSV export (File > Export > CSV, 1Password 8 for Mac,
// Windows and Linux): one row per Login or Password item, under the header
// Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes. Columns
// are found by name, so an older export that says Website for Url, or puts
// them in another order, reads too. Custom fields are not in this export
// (1Password keeps them in .1pux, which is refused with ErrOnePUX).

func onePasswordHeader(header string) bool {
	h := headerNames(header)
	return h["title"] && h["password"] && (h["url"] || h["website"]) && !h["login_password"]
}

func readOnePasswordCSV(data []byte) (*Source, error) {
	t, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	src := &Source{Format: FormatOnePasswordCSV}
	for _, r := range t.rows {
		e := Entry{
			Name:     cleanText(t.get(r, "title"), maxName),
			Username: cleanText(t.get(r, "username"), 256),
			Host:     hostOf(t.get(r, "url", "website")),
			Line:     r.line,
			Kind:     KindUnknown,
		}
		if pw := t.get(r, "password"); pw == "" {
			e.Problem = problemNoPassword
		} else {
			e = fromString(e, pw)
		}
		src.Entries = append(src.Entries, e)
		clear(r.fields)
	}
	return src, nil
}
