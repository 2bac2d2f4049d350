//go:build !unix

package workspace

// nonBlock is not needed where named pipes cannot be in the workspace.
const nonBlock = 0
