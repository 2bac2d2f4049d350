// Package agentspaces is courier's second front end: the Agent Spaces
// operations/events protocol, a JSON contract in which an agent sends
// {"protocolVersion": "1.0", "operations": [...]} with six operation types
// (message, createFile, readFile, editFile, deleteFile, shell) and courier
// answers {"protocolVersion": "1.0", "runId": ..., "status": ...,
// "events": [...]}, one event per operation, in order. It maps operations
// onto courier's one command model (package command), so the same engine,
// policy, sandbox, journal and undo carry them out as the tag protocol's
// commands.
//
// # Reading operations
//
// Decode reads a program's message (`courier ops`), ParseReply a chat
// reply. Each operation is validated by the protocol's schema and rules
// (see validate.go), members it does not name ignored; an invalid one
// becomes a command.ParseError in its place, whose event is a validation
// error naming the operation, its line and the rule, and the batch goes on.
//
// # What the engine must do
//
// Valid operations become commands with flags that ask for the protocol's
// semantics. The engine must honour them:
//
//   - message: MESSAGE with Text. In a chat reply of message operations
//     only, the last is a DONE (the protocol's final response), which ends
//     the session with it as the summary.
//   - createFile: CREATE_FILE with NoOverwrite unless "overwrite": true
//     (an existing file fails with Cause CauseExists). With Encoding
//     command.Base64, Content is padded standard base64: the engine
//     decodes it and writes the bytes, skips the check for elided code
//     (which is for text) and shows no text diff. Parent folders are made.
//   - readFile: READ_FILE with Inline: the engine reads exactly the one
//     file Path names, literally (no glob), and puts it in the result:
//     Content (the text if Encoding is empty and the bytes are valid
//     UTF-8, else base64 with Result.Encoding command.Base64), Size (the
//     file's size in bytes). A missing file fails with CauseNotFound, a
//     folder fails. It should refuse files over MaxContentBytes rather
//     than load them.
//   - editFile: EDIT_FILE with Literal and Edits: each Search is found
//     exactly (byte for byte, no whitespace or indentation tolerance) in
//     the text the previous pairs left, its first occurrence is replaced by
//     Replace taken literally ("$&", "$1" and the like are plain text), and
//     nothing is skipped as already applied. All pairs are applied in
//     memory first; if one is not found the file is left unchanged and the
//     result fails, naming the pair. A missing file fails with
//     CauseNotFound.
//   - deleteFile: DELETE_FILE; files only; a missing file fails with
//     CauseNotFound.
//   - shell: RUN_COMMAND with SplitOutput, Dir (cwd), Timeout (0 means the
//     session's default, 2 minutes unless configured, where the
//     protocol's documents say 30 s) and Env. The engine fills Stdout and Stderr separately,
//     each capped as Output is, ExitCode when the command exited,
//     DurationMS, and TimedOut when the time limit stopped it. It sets
//     courier's own variables (the command tag) after the command's Env,
//     so an operation cannot replace them; validation already refuses
//     names starting with COURIER_.
//
// For every result the engine also sets Time (when the command finished).
// A command the policy denies has Cause CausePolicy and Reason the
// verdict's reason; one the person denies has Cause CausePerson and
// Reason the person's own words, possibly empty. A command interrupted by
// the run's own deadline has Cause CauseDeadline. A paused command
// becomes a Pause with the pending command's index, the verdict's reason
// and its rule key (policy.Verdict.Rule), and after the answer the run
// resumes with Outcome.From at that index: approved, the command runs
// and its event comes first; denied, it gives policyDenied; the rest of
// the batch runs either way.
//
// # courier's own safety underneath
//
// Every file operation goes through the workspace's os.Root (a link out
// gives policyDenied), shell commands run in courier's sandbox, every
// change is journaled before it is made (exactly once, undoable), and the
// shell policy is courier's parser-based one, onto which Preset maps the
// protocol's three presets.
package agentspaces
