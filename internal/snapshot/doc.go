// Package snapshot makes every turn of a session reversible, commands
// included: it records the state of the workspace, finds what each
// command changed, keeps the earlier content of what changed, and puts
// the workspace back exactly as it was before a turn.
//
// The index is git's: per path its kind, mode, size, times, inode and,
// once read, content hash. A scan stats every path but reads only those
// whose stat data changed since the last scan (or were too recent to be
// trusted: git's racy-clean problem), so comparing costs a walk, and
// recording costs the bytes changed. Each content read is stored once,
// under its SHA-256, compressed when that pays; since every snapshotted
// file's content is in the store, the earlier content of whatever a
// command overwrites or deletes is there when it is needed. Contents
// under 64 KB are appended to pack files, so that 100,000 small files
// take about their size on disk, not 100,000 blocks, and cost appends,
// not file creations; larger ones are files of their own.
//
// Scope: the whole workspace, .git included, except what .gitignore or
// the exclusion setting leaves out (those paths are seen at their
// boundary, so a command changing them is reported as not undoable), plus
// what the inclusion setting forces in. A path once snapshotted stays
// snapshotted while it exists.
//
// Safety: the workspace is only ever reached through folder descriptors
// opened one element at a time with O_NOFOLLOW, so neither a scan nor a
// restore follows a symlink a command planted. Every step is recorded
// before it is relied on and is safe to repeat, so a crash at any moment
// (a kill -9 during a scan, a command or an undo) leaves a state the next
// run finishes exactly once.
//
// Limits, chosen and reported: a turn reads at most Options.TurnLimit of
// content, counting a sparse file by its apparent size (a 64 GB sparse
// file is not read but reported as not snapshotted); the store is brought
// back to Options.Budget after each turn by dropping the oldest turns (a
// pack is rewritten without what was dropped once that gives back a
// quarter of it, or when the budget needs it).
// Undo restores kinds, contents, permission bits (setuid, setgid and
// sticky included) and symlink targets; it does not restore modification
// times (a restored file is new to build tools, which is the safe side),
// owners, extended attributes, hard links between paths, sockets or
// device files.
//
// Layout of the store folder: index (the workspace as last scanned),
// packs/NNNNNN.pack and .idx (small contents, and where each lies),
// objects/ (larger contents, one file each; every content in stores
// made before packs), turns/NNNN.log (what each command of turn NNNN
// changed), turns/NNNN.undo (an undo in progress or done),
// turns/NNNN.pruned (the turn's contents were dropped to meet the
// budget), kept/NNNN/ (later work set aside by the undo of turn NNNN).
package snapshot
