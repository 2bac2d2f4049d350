package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// maxGlobFiles caps the files one READ_FILE pattern brings into an
// outbox, so "**/*" cannot flood the chat.
const maxGlobFiles = 30

// requested reads the files the LLM asked for, as they are now, numbered
// and cut to a sensible length.
func (rn *Runner) requested(ws *workspace.Workspace, reqs []session.ReadRequest) []frontend.FileContent {
	var out []frontend.FileContent
	seen := map[string]bool{}
	for _, r := range reqs {
		paths := []string{r.Path}
		if workspace.IsGlob(r.Path) {
			matches, err := ws.Glob(r.Path)
			if err != nil || len(matches) == 0 {
				out = append(out, frontend.FileContent{Path: r.Path, Text: "(no file matches this pattern now)"})
				continue
			}
			if len(matches) > maxGlobFiles {
				out = append(out, frontend.FileContent{Path: r.Path, Text: fmt.Sprintf(
					"(%d files match; the first %d are shown below. Ask for the others with narrower patterns.)", len(matches), maxGlobFiles)})
				matches = matches[:maxGlobFiles]
			}
			paths = matches
		}
		for _, p := range paths {
			key := fmt.Sprintf("%s:%d-%d", p, r.StartLine, r.EndLine)
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, frontend.FileContent{Path: p, Text: rn.fileText(ws, p, r)})
		}
	}
	return out
}

func (rn *Runner) fileText(ws *workspace.Workspace, p string, r session.ReadRequest) string {
	data, err := ws.ReadFile(p)
	switch {
	case workspace.IsOutside(err):
		return "(REJECTED: " + err.Error() + ")"
	case errors.Is(err, fs.ErrNotExist):
		return "(file not found: it no longer exists)"
	case err != nil:
		return fmt.Sprintf("(cannot read: %v)", err)
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return fmt.Sprintf("(binary file, %d bytes; not shown)", len(data))
	}
	return edit.Numbered(p, string(data), edit.NumberOptions{From: r.StartLine, To: r.EndLine, MaxLines: rn.cfg.Limits.ReadLines, MaxLineLen: 2000})
}
