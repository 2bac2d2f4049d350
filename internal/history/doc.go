// Package history keeps the history of a session: its state, its lock,
// the record of each turn, the contents that put files back, and what
// reads them: undo, log, diff and gc. One record serves both exactly-once
// recovery and undo; one type (Change) describes what happened to a path,
// one (Report) what an undo did.
//
// # Layout
//
//	sessions/<id>.json             the state: constant size, rewritten at each commit
//	sessions/<id>.lock             the lock (flock)
//	sessions/<id>/turns/NNNN.jsonl the turn answering request NNNN, one Record a line
//	sessions/<id>/objects/         the contents, each once, in packs
//	sessions/<id>/index            the workspace as last seen, for the next turn
//	sessions/<id>/replies.jsonl    the applied replies, by hash
//	sessions/<id>/kept/NNNN/       later work the undo of turn NNNN set aside
//
// # What a turn records
//
// The begin record names the reply and its commands. A file command's
// apply record holds the hashes of its file before and after the change;
// a RUN_COMMAND's start record is written before it runs; each command's
// result follows. Around each command, the workspace is compared with the
// index: a file command looks at its file and the folders above it, a
// RUN_COMMAND at the whole workspace (a walk that reads only what changed
// since, as git's index does; snapshots = false leaves these out). What
// changed outside the turn before a command is recorded as the new
// starting point (a changed record of index -1); what changed during it
// as the command's (a changed record of its index), each path with its
// state before and after. Undo, log and diff read those records, and the
// contents they name.
//
// # What is durable before what
//
// A kill -9 keeps every write courier made, in order; a power cut keeps
// only what was synced. The rules below hold for both.
//
//  1. The begin record is synced before the turn changes anything.
//  2. Write-ahead: a file command's apply record, the contents of the
//     paths it changes as they are (and the text a line-range edit's
//     numbers refer to, when the turn's records cannot rebuild it) are
//     synced before the change is made. One sync covers a run of file
//     commands, since nothing outside courier sees them in between.
//  3. A change's result is recorded once the change is durable. Until
//     then recovery decides from the file's content whether it happened:
//     the content before it (redo it), the content after it (it
//     happened), or anything else (something else changed the file:
//     leave it and say so).
//  4. The start record of a RUN_COMMAND, and the contents of the
//     workspace before it, are synced before it runs, so it is never run
//     twice and what it changes can be undone.
//  5. An approval answer is synced before the command it approves runs.
//  6. Commit: the record is synced, the reply noted, the next request
//     written, and the state saved: the commit point. Before it, recovery
//     finishes the turn from its record; after it, the reply is known as
//     applied.
//  7. Undo is a transaction like a turn: the state is first saved with the
//     undo under way; each path is put back (each step idempotent: a path
//     already as before is left alone, one changed since the turn is first
//     set aside, synced); the turn gets its undone record; the next
//     request is written and the state saved with the undo done, the
//     commit point. Whoever takes the session next finishes an undo under
//     way before anything else, so an interrupted undo takes back exactly
//     one turn.
//
// # The contents
//
// Each content is kept once, under its SHA-256, compressed when that
// pays, in pack files with an index of where each lies (see objects.go).
// Three stores were weighed. Git's object database in a bare repository
// beside the session would give packs and gc for free, but it cannot hold
// the workspace's own nested .git folders, which a command may change and
// undo must put back, and it means running a program on every turn and
// needing git installed. Loose compressed objects, one file each, are the
// simplest, but cost a disk block per content: the first snapshot of
// 100,000 small files would take 400 MB. Packs keep that snapshot within
// about 35 MB, and cost appends, not file creations; so courier keeps
// packs, written in one way only (appended, synced, then listed in their
// index) and rewritten only by gc, which copies what is still needed into
// a new pack before the old one goes.
//
// # Limits and safety
//
// A turn reads at most Options.TurnLimit of content for what commands
// change; a file command's file is always kept (the engine refuses a
// change it could not keep). After each turn the contents are brought
// back within Options.Budget by dropping the oldest turns', which can then
// no longer be undone. The workspace is only ever reached through folder
// descriptors opened one element at a time with O_NOFOLLOW: neither a
// scan nor an undo follows a symlink a command planted, and no file is
// restored through a link. Undo restores kinds, contents, permission bits
// and symlink targets; not modification times (a restored file is new to
// build tools, the safe side), owners, extended attributes, hard links,
// sockets or devices.
package history
