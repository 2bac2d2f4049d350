// Package clipboard reads and writes the system clipboard through the
// platform's clipboard tools (wl-clipboard, xclip, xsel, pbcopy, clip.exe),
// so a person can move courier's requests and the LLM's replies without
// handling files.
package clipboard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// backend describes one clipboard tool set and when it applies.
type backend struct {
	name    string
	copy    []string // program and arguments; text arrives on stdin
	paste   []string // program and arguments; text leaves on stdout
	install string   // what to install when the programs are missing
	applies func(env map[string]string) bool
	// verify makes Copy wait until a paste returns the text: tools that
	// fork a server (xclip, xsel, wl-copy) return before that server owns
	// the clipboard, so a paste right after could still see the old text.
	verify bool
	// maxCopy, when set, is the largest text in bytes the tool copies
	// reliably.
	maxCopy int
	env     []string // extra environment for the tools
	// windows: clip.exe and PowerShell, which want UTF-16 (see encode).
	windows bool
}

// backends in order of preference. Wayland comes before X because X tools
// under XWayland do not reach native Wayland programs reliably; xclip comes
// before xsel because xsel's server sometimes fails to serve.
var backends = []backend{
	{
		name: "wl-clipboard", install: "wl-clipboard",
		copy:    []string{"wl-copy", "--type", "text/plain;charset=utf-8"},
		paste:   []string{"wl-paste", "--no-newline", "--type", "text"},
		applies: func(env map[string]string) bool { return env["WAYLAND_DISPLAY"] != "" },
		verify:  true,
	},
	{
		name: "xclip", install: "xclip",
		copy:    []string{"xclip", "-selection", "clipboard", "-in"},
		paste:   []string{"xclip", "-selection", "clipboard", "-out", "-target", "UTF8_STRING"},
		applies: hasDisplay, verify: true,
	},
	{
		name: "xsel", install: "xsel",
		copy:    []string{"xsel", "--clipboard", "--input"},
		paste:   []string{"xsel", "--clipboard", "--output"},
		applies: hasDisplay, verify: true,
		// xsel 1.2's server hands over texts longer than about 4000 bytes
		// in pieces, and dies when the pasting program goes away early, so
		// the clipboard turns empty later; refusing is more honest.
		maxCopy: 4000,
	},
	{
		name: "pbcopy", install: "pbcopy (part of macOS)",
		copy:    []string{"pbcopy"},
		paste:   []string{"pbpaste"},
		applies: func(map[string]string) bool { return runtime.GOOS == "darwin" },
		// pbcopy and pbpaste read and write text in the locale's encoding.
		env: []string{"LANG=en_US.UTF-8"},
	},
	{
		name: "windows", install: "Windows interop (clip.exe and powershell.exe on PATH)",
		copy: []string{"clip.exe"},
		paste: []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
			"[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false; Get-Clipboard -Raw"},
		applies: isWindows,
		windows: true,
	},
}

func hasDisplay(env map[string]string) bool { return env["DISPLAY"] != "" }

// isWindows covers native Windows and WSL, whose Windows programs reach the
// Windows clipboard.
func isWindows(env map[string]string) bool {
	return runtime.GOOS == "windows" || env["WSL_DISTRO_NAME"] != "" || env["WSL_INTEROP"] != ""
}

// Clipboard is a system clipboard reached through one tool set.
type Clipboard struct {
	b     backend
	copy  []string // with the program resolved to a path
	paste []string
	env   []string
}

// Detect finds a clipboard tool set that fits the session described by env
// (os.Environ form; the tools are found on its PATH and run with it), or
// says what is missing. It does not run the tools.
func Detect(env []string) (*Clipboard, error) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v // the last setting wins, as in exec.Cmd
	}
	var missing []string
	for _, b := range backends {
		if !b.applies(vars) {
			continue
		}
		copyPath, okc := lookPath(b.copy[0], vars["PATH"])
		pastePath, okp := lookPath(b.paste[0], vars["PATH"])
		if !okc || !okp {
			missing = append(missing, b.install)
			continue
		}
		return &Clipboard{
			b:     b,
			copy:  append([]string{copyPath}, b.copy[1:]...),
			paste: append([]string{pastePath}, b.paste[1:]...),
			env:   append(append([]string(nil), env...), b.env...),
		}, nil
	}
	if len(missing) == 0 {
		return nil, errors.New("no clipboard: no graphical session (neither DISPLAY nor WAYLAND_DISPLAY is set)")
	}
	return nil, fmt.Errorf("no clipboard: install %s", strings.Join(missing, " or "))
}

// lookPath finds an executable in path (a PATH value). It ignores empty and
// relative entries, so a tool is never picked up from the workspace.
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && (runtime.GOOS == "windows" || info.Mode()&0o111 != 0) {
			return p, true
		}
	}
	return "", false
}
