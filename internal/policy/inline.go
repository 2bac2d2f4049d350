package policy

import (
	"regexp"
	"strings"
	"sync"
)

// inlineRuns finds, per interpreter, the names inline code must write to
// delete files or start programs; code that builds them at run time is
// for the sandbox and undo to contain.
var inlineRuns = sync.OnceValue(func() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		"python": regexp.MustCompile(`\b(rmtree|remove|removedirs|unlink|rmdir|subprocess|system|popen|exec[lv]p?e?|spawn[lv]?p?e?|posix_spawnp?|fork|kill|killpg|__import__|importlib|exec|eval|ctypes)\b`),
		"pypy":   nil, // as python
		"perl":   regexp.MustCompile("\\b(unlink|rmdir|rmtree|remove_tree|system|exec|fork|kill|eval|qx|readpipe|syscall)\\b|`|\\bopen\\b[^;]*\\|"),
		"ruby":   regexp.MustCompile("\\b(FileUtils|rm_rf|rm_r|rm_f|rmdir|rmtree|unlink|delete|system|exec|spawn|fork|popen|popen3|Open3|PTY|eval|instance_eval|class_eval|kill|syscall)\\b|`|%x"),
		"node":   regexp.MustCompile(`\b(child_process|exec|execSync|execFile|execFileSync|spawn|spawnSync|fork|rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync|eval|Function|vm|kill|dlopen)\b`),
		"nodejs": nil, // as node
		"php":    regexp.MustCompile("\\b(unlink|rmdir|system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|pcntl_fork|eval|assert|create_function|dl|ffi)\\b|`"),
		"lua":    regexp.MustCompile(`\bos\.(remove|rename|execute|exit)\b|\bio\.popen\b|\b(loadstring|load|dofile|loadfile|require)\b`),
	}
})

// inlineNotes asks about inline interpreter code (python3 -c, perl -e, a
// here-document fed to one) that deletes files or starts programs.
func inlineNotes(name string, spec interpSpec, words []word, in stdin) []finding {
	family := strings.TrimRight(name, "0123456789.")
	re := inlineRuns()[family]
	switch family {
	case "pypy":
		re = inlineRuns()["python"]
	case "nodejs":
		re = inlineRuns()["node"]
	}
	if re == nil {
		return nil
	}
	src := interpreterSource(spec, words)
	var code word
	switch {
	case src.inline != nil:
		code = *src.inline
	case (src.script >= len(words) || isStdinPath(words[src.script].value)) && in.kind == stdinText:
		code = *in.text
	default:
		return nil
	}
	if code.computed() && src.inline != nil && src.computed {
		return nil // computedCode already asks
	}
	if m := re.FindString(code.value); m != "" {
		return []finding{runsCode(family, words, "its inline "+family+" code may delete files or start programs ("+m+"), which courier cannot follow")}
	}
	return nil
}
