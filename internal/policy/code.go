package policy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shells are the programs whose code (-c, standard input, here-document)
// courier parses again.
var shells = set("sh bash dash zsh ksh mksh ash yash posh rbash fish")

// downloaders fetch from the network.
var downloaders = set("curl wget wget2 fetch aria2c http https xh lwp-request GET")

// set makes a set of words separated by spaces.
func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// interpSpec describes how an interpreter is given its program.
type interpSpec struct {
	inline string   // short options whose value is the program (python -c)
	long   []string // long options whose value is the program
	values string   // other short options that take a value
	// runs finds the names inline code must write to delete files or
	// start programs; code that builds them at run time is for the
	// sandbox and undo to contain.
	runs *regexp.Regexp
}

var (
	python = interpSpec{inline: "cm", values: "WX", runs: regexp.MustCompile(`\b(rmtree|remove|removedirs|unlink|rmdir|subprocess|system|popen|exec[lv]p?e?|spawn[lv]?p?e?|posix_spawnp?|fork|kill|killpg|__import__|importlib|exec|eval|ctypes)\b`)}
	node   = interpSpec{inline: "ep", long: []string{"--eval", "--print"}, values: "r", runs: regexp.MustCompile(`\b(child_process|exec|execSync|execFile|execFileSync|spawn|spawnSync|fork|rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync|eval|Function|vm|kill|dlopen)\b`)}
)

// interpreters run code courier cannot check; it notices code from a
// download or a pipe.
var interpreters = map[string]interpSpec{
	"python": python, "pypy": python, "node": node, "nodejs": node,
	"perl": {inline: "eE", values: "IM", runs: regexp.MustCompile("\\b(unlink|rmdir|rmtree|remove_tree|system|exec|fork|kill|eval|qx|readpipe|syscall)\\b|`|\\bopen\\b[^;]*\\|")},
	"ruby": {inline: "e", values: "IrE", runs: regexp.MustCompile("\\b(FileUtils|rm_rf|rm_r|rm_f|rmdir|rmtree|unlink|delete|system|exec|spawn|fork|popen|popen3|Open3|PTY|eval|instance_eval|class_eval|kill|syscall)\\b|`|%x")},
	"php":  {inline: "rBRE", values: "cdz", runs: regexp.MustCompile("\\b(unlink|rmdir|system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|pcntl_fork|eval|assert|create_function|dl|ffi)\\b|`")},
	"lua":  {inline: "e", values: "l", runs: regexp.MustCompile(`\bos\.(remove|rename|execute|exit)\b|\bio\.popen\b|\b(loadstring|load|dofile|loadfile|require)\b`)},
}

// interpreterSpec finds an interpreter by name; python3.12 is python.
func interpreterSpec(name string) (interpSpec, bool) {
	spec, ok := interpreters[strings.TrimRight(name, "0123456789.")]
	return spec, ok
}

// code analyzes the shell code prog ("bash -c", "eval") runs one level
// deeper; code built from expansions is read as written and asked about.
func (a *analyzer) code(prog, subject string, words ...word) {
	if a.scratch {
		return
	}
	texts := make([]string, len(words))
	expands := false
	for i, w := range words {
		texts[i] = w.code
		expands = expands || w.expands
	}
	if expands {
		a.computedCode(prog, subject, words...)
	}
	if a.depth >= maxDepth {
		a.finding(checkUnparseable, subject, fmt.Sprintf("shell code nested more than %d levels deep", maxDepth))
		return
	}
	newAnalyzer(a.out, a.depth+1).run(strings.Join(texts, " "), subject, "the code for "+prog)
}

// computedCode notes code whose text is only known at run time.
func (a *analyzer) computedCode(prog, subject string, words ...word) {
	download := slices.ContainsFunc(words, func(w word) bool { return w.node != nil && a.downloads(w.node) })
	a.unreadable(download, subject, fmt.Sprintf("the code %s runs is computed at run time", prog))
}

// unreadable notes code that no one can read beforehand.
func (a *analyzer) unreadable(download bool, subject, detail string) {
	if download {
		a.finding(checkDownload, subject, "runs code downloaded from the network")
	} else {
		a.finding(checkDynamic, subject, detail)
	}
}

// shell looks at how a shell gets its code: -c, standard input, a script.
func (a *analyzer) shell(name string, words []word, in stdin) {
	i, cflag, sflag := 1, false, false
options:
	for ; i < len(words); i++ {
		w, v := words[i], words[i].value
		switch {
		case w.computed() && w.optLike && !cflag:
			// It may be options such as -c, and then anything.
			a.computedCode(name, wordsSource(words), words[i:]...)
			return
		case w.computed():
			break options
		case v == "--" || v == "-":
			i++
			break options
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			cflag = cflag || (v[0] == '-' && strings.ContainsRune(v, 'c'))
			sflag = sflag || (v[0] == '-' && strings.ContainsRune(v, 's'))
			if strings.ContainsAny(v[1:], "oO") {
				i++
			}
		default:
			break options
		}
	}
	switch {
	case cflag:
		if i < len(words) {
			a.code(name+" -c", wordsSource(words), words[i:i+1]...)
		}
	case sflag:
		a.stdinCode(name, in)
	default:
		a.script(name, words, i, in)
	}
}

// interpreter looks at how python, perl, node... get their code: code from
// a pipe or a process substitution is no one's to read, and inline code
// (python3 -c, a here-document) that deletes files or starts programs asks.
func (a *analyzer) interpreter(name string, spec interpSpec, words []word, in stdin) []finding {
	var code *word
	i := 1
options:
	for ; i < len(words); i++ {
		if words[i].computed() {
			if words[i].optLike {
				// It may be an inline-code option and its code, attached.
				a.computedCode(name, wordsSource(words), words[i:]...)
				return nil
			}
			break
		}
		v := words[i].value
		var option, attached string
		var hasAttached bool
		switch j := strings.IndexAny(v[min(1, len(v)):], spec.inline) + 1; {
		case v == "--":
			i++
			break options
		case v == "-" || len(v) < 2 || v[0] != '-':
			break options
		case strings.HasPrefix(v, "--"):
			if option, attached, hasAttached = strings.Cut(v, "="); !slices.Contains(spec.long, option) {
				continue
			}
		case j > 0:
			option, attached, hasAttached = "-"+v[j:j+1], v[j+1:], j < len(v)-1
		default:
			if j := strings.IndexAny(v[1:], spec.values); j >= 0 && j == len(v)-2 {
				i++
			}
			continue
		}
		switch {
		case hasAttached:
			w := partOf(words[i], attached)
			code = &w
		case i+1 < len(words) && words[i+1].expands:
			a.computedCode(name+" "+option, wordsSource(words), words[i+1])
			return nil
		case i+1 < len(words):
			code = &words[i+1]
		default:
			code = &word{}
		}
		break
	}
	if code == nil {
		a.script(name, words, i, in)
		if (i >= len(words) || isStdinPath(words[i].value)) && in.text != nil {
			code = in.text
		}
	}
	if code == nil {
		return nil
	}
	if m := spec.runs.FindString(code.value); m != "" {
		family := strings.TrimRight(name, "0123456789.")
		return []finding{runsCode(family, words, "its inline "+family+" code may delete files or start programs ("+m+"), which courier cannot follow")}
	}
	return nil
}

// script looks at the script operand words[i] of a shell or interpreter:
// standard input, a downloaded file or another command's output.
func (a *analyzer) script(name string, words []word, i int, in stdin) {
	switch {
	case i < len(words) && !isStdinPath(words[i].value) && a.downloaded(words[i]):
		a.finding(checkDownload, wordsSource(words), "runs "+words[i].shown()+", a file downloaded from the network")
	case (i >= len(words) || isStdinPath(words[i].value)) && in.file != nil && a.downloaded(*in.file):
		a.finding(checkDownload, in.src, "runs "+in.file.value+", a file downloaded from the network")
	}
	if i >= len(words) || (!words[i].computed() && isStdinPath(words[i].value)) {
		if in.pipe || shells[name] {
			a.stdinCode(name, in)
		}
		return
	}
	if n := words[i].node; n != nil && hasSubstitution(n, false) { // as in `bash <(curl -s URL)`
		a.unreadable(a.downloads(n), wordsSource(words), name+" runs code produced by another command, which courier cannot check")
	}
}

// isStdinPath reports whether a script operand names standard input.
func isStdinPath(p string) bool {
	return slices.Contains([]string{"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}, path.Clean(p))
}

// stdinCode handles code read from standard input.
func (a *analyzer) stdinCode(name string, in stdin) {
	switch {
	case in.pipe:
		a.unreadable(in.download, in.src, name+" runs code read from a pipe, which courier cannot check")
	case in.text != nil && shells[name]:
		a.code(name, in.src, *in.text)
	}
}

// alias values are code that runs wherever the alias is used.
func (a *analyzer) alias(words []word) {
	for _, w := range words[1:] {
		name, _, ok := strings.Cut(w.value, "=")
		if !ok || name == "" || strings.ContainsAny(name, "$`-") {
			continue
		}
		v := w
		v.value = w.value[len(name)+1:]
		_, v.code, _ = strings.Cut(w.code, "=")
		a.code("alias "+name, wordsSource(words), v)
	}
}

// trap's first operand is code the shell runs on a signal or at exit.
func (a *analyzer) trap(words []word) {
	args := words[1:]
	for len(args) > 0 && !args[0].computed() && strings.HasPrefix(args[0].value, "-") && args[0].value != "-" {
		done := args[0].value == "--"
		args = args[1:]
		if done {
			break
		}
	}
	if len(args) < 2 {
		return
	}
	v := args[0].value
	if !args[0].computed() && (v == "-" || strings.Trim(v, "0123456789") == "") {
		return
	}
	a.code("trap", wordsSource(words), args[:1]...)
}

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
	case name == "tee" && in.pipe && in.download:
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
	return slices.Contains(a.out.downloads, anyDownload) || slices.Contains(a.out.downloads, fileKey(w))
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
