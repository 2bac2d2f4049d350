// Package history keeps the history of a session: its state, its lock,
// the record of each turn, the contents that put files back, and what
// reads them: undo, log, diff and gc. One record serves both exactly-once
// recovery and undo; one type (Change) describes what happened to a path,
// one (Report) what an undo did.
//
//	sessions/<id>.json             the state: constant size, rewritten at each commit
//	sessions/<id>.lock             the lock (flock)
//	sessions/<id>/turns/NNNN.jsonl the turn answering request NNNN, one Record a line
//	sessions/<id>/objects/         the contents, each once, in packs
//	sessions/<id>/index            the workspace as last seen
//	sessions/<id>/kept/NNNN/       later work the undo of turn NNNN set aside
//
// # A turn's record
//
// The begin record names the reply and its commands. A file command's
// apply record holds its file's content hashes before and after; a
// RUN_COMMAND's start record is written before it runs; each result
// follows. Around each command the workspace is compared with the index:
// a file command's file and the folders above it, or for a RUN_COMMAND all
// of it, walked as git does, reading only what changed since (snapshots =
// false leaves RUN_COMMANDs out). What changed outside the turn is
// recorded as the new starting point (a changed record of index -1), what
// changed during a command as its own, each path with its state before
// and after; undo, log and diff read those, and the contents they name.
//
// # What is durable before what
//
// A kill -9 keeps every write, in order; a power cut keeps what was
// synced. The rules hold for both.
//
//  1. The begin record is synced before the turn changes anything.
//  2. Write-ahead: a file command's apply record, and the contents of the
//     files it changes as they are (and the text a line-range edit numbers
//     from, when the records cannot rebuild it), are synced before the
//     change is made; one sync covers a run of file commands.
//  3. A change's result is recorded once the change is durable. Until
//     then recovery decides from the file's content whether it happened:
//     the content before (redo it), after (it happened), or anything else
//     (leave it and say so).
//  4. A RUN_COMMAND's start record, and the workspace's contents before
//     it, are synced before it runs, so it never runs twice and what it
//     changes can be undone.
//  5. An approval answer is synced before the command it approves runs.
//  6. Commit: the record is synced, the next request written, and the
//     state saved: the commit point.
//  7. Undo is a transaction: the state is saved with the undo under way;
//     each path is put back, each step idempotent (a path already back is
//     left alone, later work on it set aside, synced, first); the turn
//     gets its undone record; the request and then the state are saved,
//     the commit point. Whoever takes the session next finishes an undo
//     under way before anything else: exactly one turn is undone.
//
// # The contents
//
// Each content is kept once, under its SHA-256, compressed when that
// pays, in packs with an index of where each lies. Three stores were
// weighed. Git's object database in a bare repository beside the session
// gives packs and gc for free, but cannot hold the workspace's own nested
// .git folders, which commands change and undo must put back, and means
// running a program (which must be installed) on every turn. Loose
// compressed objects, a file each, are the simplest, but cost a disk
// block each: the first snapshot of 100,000 small files would take 400
// MB. Packs hold it in about 35 MB and cost appends, not file creations;
// so courier keeps packs, written one way only (appended, synced, then
// listed) and rewritten only by gc, which copies what is still needed
// into a new pack before the old one goes.
//
// # Limits and safety
//
// A turn reads at most Options.TurnLimit to keep what commands change; a
// file command's file is always kept (the engine refuses a change it
// could not keep). After each turn the contents are brought back within
// Options.Budget by dropping the oldest turns', which can then no longer
// be undone. The workspace is only reached through folders opened one
// element at a time with O_NOFOLLOW: neither a scan nor an undo follows a
// symlink, and no file is restored through a link. Undo restores kinds,
// contents, permission bits and symlink targets; not times (a restored
// file is new to build tools, the safe side), owners, extended
// attributes, hard links, sockets or devices.
package history
