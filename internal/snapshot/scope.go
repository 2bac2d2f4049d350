package snapshot

import "github.com/courier-agent/courier/internal/workspace"

// scope decides what a scan snapshots: everything but what .gitignore or
// the exclusion setting leaves out, plus what the inclusion setting forces
// in. Rules only decide for paths the snapshot does not hold yet: a path
// it holds stays in while it exists, as in git, so a command that adds
// "*" to .gitignore before deleting everything cannot hide the deletion.
type scope struct {
	gitignore        func(p string, isDir bool) bool
	exclude, include *workspace.Patterns
	// private holds courier's own folders inside the workspace.
	private map[string]bool
}

// walkCtx is what a folder passes down to its contents.
type walkCtx struct {
	// git is set inside the workspace's .git folder, which .gitignore
	// files never leave out.
	git bool
	// included is set below a folder the inclusion setting names.
	included bool
	// ignored is set inside a folder the rules leave out, entered only
	// for paths the snapshot holds or the inclusion setting names there.
	ignored bool
	depth   int
}

// verdict is what the scope says of one path.
type verdict uint8

const (
	// inScope paths are snapshotted.
	inScope verdict = iota
	// boundary paths are left out but seen: the scan records their
	// presence and stat data, so a command changing them is reported.
	boundary
	// hidden paths are inside a folder that is already a boundary: left
	// out without a trace, but a folder is still walked for what the
	// snapshot holds below it.
	hidden
	// excluded paths are left out by the setting, without a trace, and a
	// folder is never walked: the person wants it out.
	excluded
)

// decide places a path that the previous scan had as prev (nil if it did
// not have it). A path the snapshot holds stays in while it exists: rules
// and settings only decide for new paths. sticky keeps a boundary a
// boundary, so that within a turn a command cannot pull an ignored folder
// into the snapshot by deleting .gitignore.
func (s *scope) decide(p string, isDir bool, prev *Entry, cx walkCtx, sticky bool) verdict {
	if s.private[p] {
		return excluded
	}
	if prev != nil && !prev.Ignored() {
		return inScope
	}
	forced := cx.included || s.include.Match(p, isDir)
	if !forced && s.exclude.Match(p, isDir) {
		return excluded
	}
	if forced || cx.git || p == ".git" {
		return inScope
	}
	if cx.ignored {
		return hidden
	}
	if sticky && prev != nil {
		return boundary
	}
	if s.gitignore(p, isDir) {
		return boundary
	}
	return inScope
}

// child returns the context of folder p's contents.
func (s *scope) child(cx walkCtx, p string, v verdict) walkCtx {
	next := cx
	next.depth++
	if p == ".git" {
		next.git = true
	}
	if s.include.Match(p, true) {
		next.included = true
	}
	if v != inScope {
		next.ignored = true
	}
	return next
}

// enterLeftOut reports whether a folder left out must still be walked:
// the snapshot holds paths inside it, or the inclusion setting names some.
func (s *scope) enterLeftOut(p string, prevHasInside bool) bool {
	return prevHasInside || s.include.MayMatchInside(p)
}

// isPrivate reports whether p is in one of courier's own folders.
func (s *scope) isPrivate(p string) bool {
	for q := p; q != ""; q = parentOf(q) {
		if s.private[q] {
			return true
		}
	}
	return false
}
