package policy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// anyDownload stands for a download whose name is unknown (curl -J,
// wget -i): any script run after it counts.
const anyDownload = "*"

// noteDownloads remembers the files downloaders save, by base name, so
// that `curl -o a.sh URL && sh a.sh` counts as running downloaded code.
func (a *analyzer) noteDownloads(inv Invocation, words []word, in stdin) {
	switch name := strings.ToLower(inv.base); {
	case name == "curl":
		a.out.downloads = append(a.out.downloads, curlFiles(words)...)
	case name == "wget" || name == "wget2":
		a.out.downloads = append(a.out.downloads, wgetFiles(words)...)
	case downloaders[name]:
		a.out.downloads = append(a.out.downloads, anyDownload)
	case name == "tee" && in.kind == stdinPipe && in.download:
		for _, w := range words[1:] {
			if !strings.HasPrefix(w.value, "-") {
				a.out.downloads = append(a.out.downloads, fileKey(w))
			}
		}
	}
}

// noteRedirectDownload remembers a downloader's redirected output
// (`curl URL > a.sh`).
func (a *analyzer) noteRedirectDownload(s *syntax.Stmt) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return
	}
	base, ok := programBase(a.word(c.Args[0]))
	if !ok || !downloaders[strings.ToLower(base)] {
		return
	}
	for _, r := range s.Redirs {
		if r.Word != nil && writeOps[r.Op] && r.Op != syntax.DplOut {
			a.out.downloads = append(a.out.downloads, fileKey(a.word(r.Word)))
		}
	}
}

// downloaded reports whether w names a file downloaded earlier.
func (a *analyzer) downloaded(w word) bool {
	k := fileKey(w)
	for _, d := range a.out.downloads {
		if d == anyDownload || d == k {
			return true
		}
	}
	return false
}

// fileKey is how downloaded and run files are compared: the base name,
// or a computed word as written.
func fileKey(w word) string {
	if w.computed() {
		return w.src
	}
	return path.Base(w.value)
}

// curlFiles lists what curl saves: -o FILE, and with -O each URL's name.
func curlFiles(words []word) []string {
	var files, urls []string
	remote := false
	for _, o := range getopt(words, optSpec{values: "AbcCdDeEFHKmoPQrTtuUwxXyYz", long: []string{"--output", "--url"}}) {
		switch value := o.value; o.name {
		case "", "--url":
			urls = append(urls, fileKey(urlWord(value)))
		case "-o", "--output":
			files = append(files, fileKey(value))
		case "-O", "--remote-name", "--remote-name-all":
			remote = true
		case "-J", "--remote-header-name":
			files = append(files, anyDownload)
		}
	}
	if remote {
		files = append(files, urls...)
	}
	return files
}

// wgetFiles lists what wget saves: -O FILE, or else each URL's name.
func wgetFiles(words []word) []string {
	var files, urls []string
	named := false
	for _, o := range getopt(words, optSpec{values: "OoaiBtTwQPUelARDIX", long: []string{"--output-document", "--input-file"}}) {
		switch value := o.value; o.name {
		case "":
			urls = append(urls, fileKey(urlWord(value)))
		case "-O", "--output-document":
			named = true
			if value.value != "-" {
				files = append(files, fileKey(value))
			}
		case "-i", "--input-file":
			files = append(files, anyDownload)
		}
	}
	if !named {
		files = append(files, urls...)
	}
	return files
}

// urlWord is the name a download of a URL is saved under.
func urlWord(w word) word {
	if w.computed() {
		return w
	}
	u, _, _ := strings.Cut(w.value, "?")
	u, _, _ = strings.Cut(u, "#")
	return literalWord(path.Base(u))
}
