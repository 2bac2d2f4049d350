package atomicfile

// Syncing tells the tests whether this build syncs at all: the
// courier_nofsync build, made only for the fsync benchmark, does not.
const Syncing = syncing
