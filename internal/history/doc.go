// Package history keeps a session's history: its state, its lock, the
// record of each turn (one record for exactly-once recovery and undo),
// the contents that put files back, and undo, log, diff and gc.
//
//	sessions/<id>.json             the state: constant size, rewritten at each commit
//	sessions/<id>.lock             the lock (flock)
//	sessions/<id>/turns/NNNN.jsonl the turn answering request NNNN, one Record a line
//	sessions/<id>/objects/         the contents, each once, in packs
//	sessions/<id>/index            the workspace as last seen
//	sessions/<id>/kept/NNNN/       later work the undo of turn NNNN set aside
//
// A turn writes begin, then per command apply or start, the changes found
// around it against the index (-1: outside the turn), and the result.
//
// # What is durable before what
//
// A kill -9 keeps every write, in order; a power cut keeps what was
// synced. The rules hold for both.
//
//  1. The begin record is synced before the turn changes anything.
//  2. Write-ahead: a file command's apply record, and the contents of the
//     files it changes (and the text a line-range edit numbers from, when
//     the records cannot rebuild it), are synced before the change is
//     made; one sync covers a run of file commands.
//  3. A change's result is recorded once the change is durable; until then
//     recovery decides from the file's content: before (redo it), after
//     (it happened), anything else (leave it and say so).
//  4. A RUN_COMMAND's start record, and the workspace's contents before
//     it, are synced before it runs: it never runs twice and can be undone.
//  5. An approval answer is synced before the command it approves runs.
//  6. Commit: the record is synced, the next request written, the state
//     saved (the commit point).
//  7. Undo is a transaction: the state is saved with the undo under way;
//     each path is put back idempotently (later work on it set aside and
//     synced first); the turn gets its undone record; the request, then
//     the state (the commit point). Whoever takes the session next
//     finishes an undo under way first: exactly one turn is undone.
//
// # The contents
//
// Each content is kept once, under its SHA-256, compressed when that
// pays, in packs. Git's object database would give packs and gc for free
// but cannot hold the workspace's nested .git folders, and means running
// git every turn; loose objects cost a disk block each (400 MB for a
// first snapshot of 100,000 small files, which packs hold in 35 MB).
// Packs are only appended to, and rewritten only by gc (objects.go).
//
// # Safety
//
// The workspace is reached only through folders opened one element at a
// time with O_NOFOLLOW: nothing follows a symlink or restores through a
// link. Undo puts back kinds, contents, permission bits and symlink
// targets; not times (a restored file is new to build tools, the safe
// side), owners, extended attributes, hard links, sockets or devices.
package history
