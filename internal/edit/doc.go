// Package edit changes and compares file text for courier: it applies
// search/replace pairs and line-range edits the way chat LLMs actually write
// them, renders numbered listings and unified diffs, and spots elided code.
// It works on strings only; reading and writing files is the caller's job.
package edit
