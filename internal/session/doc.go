// Package session keeps courier's durable record of a task: the session
// state file, the per-turn journal that makes processing a reply (or an
// undo) crash-safe, the copies of file contents that make a turn
// reversible, the index of applied replies, and the lock that keeps two
// processes off one session.
//
// # Layout
//
//	sessions/<id>.json                  the state: constant size, rewritten at each commit
//	sessions/<id>.lock                  the lock (flock)
//	sessions/<id>/replies.jsonl         applied replies by hash, one line each (append-only)
//	sessions/<id>/turns/NNNN/journal.jsonl  the turn answering outbox NNNN, one record a line
//	sessions/<id>/turns/NNNN/blobs.pack     file contents the turn needs kept, each once
//	sessions/<id>/turns/NNNN/kept/...       files undo found changed since the turn, as they were
//
// # What is durable before what
//
// A kill -9 keeps every write courier made, in order; a power cut keeps
// only what was synced. The rules below hold for both.
//
//  1. The begin record (the reply's hash and its parsed commands) is synced
//     before the turn changes anything outside the journal: a reply is
//     never half applied without the journal knowing it began.
//  2. Write-ahead: the apply record of a file change, and the copy of any
//     content that cannot be derived later, are synced before the change
//     is made. A copy is kept of a file's content before the turn's first
//     change of it (undo restores it) and of the base a line-range edit's
//     numbers refer to when the turn's earlier records cannot rebuild it.
//     Contents after a change are never kept: they follow from the content
//     before and the command, which the begin record holds. One sync
//     covers all the records of a run of file commands, since nothing
//     outside courier sees them in between. What one turn keeps is capped
//     (the engine's KeepLimit); a change beyond it is refused, not made.
//  3. A change's result is recorded only once the change is durable (its
//     file synced before the rename that puts it in place, its folder
//     synced after). Until then recovery decides from the file's content
//     alone whether the change happened: the content before it (redo it,
//     recomputing the new content), the content after it or after a later
//     change of the same run (it happened; the file and the folders above
//     it are synced before that is recorded), or anything else (something
//     else changed the file: leave it and say so). A run writes each file
//     once, with its last content, so a crash leaves each file as before
//     the run or as after it.
//  4. The start record of a RUN_COMMAND is synced before the command starts,
//     so it is never run twice; the file changes before it are durable by
//     then (rule 3), because once a command has run, content no longer
//     tells what courier did.
//  5. An approval answer is synced before the command it approves runs; a
//     turn that stops to wait for one syncs its journal before the state
//     that names the question is saved.
//  6. Commit: the journal is synced, the reply is noted in replies.jsonl,
//     the next outbox is written (synced, renamed, folder synced), and then
//     the state is saved the same way. Saving the state is the commit
//     point: before it, recovery finishes the turn from its journal; after
//     it, the reply is recognised as applied. The reply file is moved out
//     of the inbox last.
//  7. replies.jsonl is not synced: it is an index of the turns' begin
//     records, caught up from them whenever it lags behind the state, and
//     rebuilt from them when it is damaged.
//  8. Undo is a transaction like a turn: the state is first saved with the
//     undo under way (which turn, and what undo reverts after it); then
//     each file is put back (each step idempotent: a file already as
//     before is left alone, and one changed since the turn is first kept,
//     synced, in kept/), durably, as in rule 3; the turn's journal
//     gets its undone record (synced); the next outbox is written; and the
//     state saved with the undo done is the commit point. Any later run
//     holding the lock finishes an undo it finds under way before doing
//     anything else, so an interrupted undo takes back exactly one turn.
//
// A turn of n new files thus costs about n+10 fsyncs, and the n are
// issued together, where a filesystem commits them as one.
//
// # History outside the state
//
// The state holds no list that grows with the turns. Duplicate replies are
// found in replies.jsonl; the turn 'courier undo' reverts next is the
// state's undoTop, and each turn's begin record names the one after it
// (undoPrev), so an undo costs the same however far back it reaches.
// Sessions written before these fields existed are read as they are: their
// replies list seeds replies.jsonl at the next save, and their undo chain
// is found once by reading the turns.
package session
