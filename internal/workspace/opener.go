package workspace

// Opener reads many files of the workspace whole, for the first request's
// pack. Each is read as ReadFile reads it.
type Opener struct{ w *Workspace }

// NewOpener returns an Opener; the number of folders it may hold open is
// no longer used.
func (w *Workspace) NewOpener(int) *Opener { return &Opener{w: w} }

// Close releases nothing: an Opener holds nothing open.
func (o *Opener) Close() {}

// ReadRegular reads the regular file p whole, as ReadFile does.
func (o *Opener) ReadRegular(p string, _ []byte) ([]byte, error) { return o.w.ReadFile(p) }

// ReadListed is ReadRegular.
func (o *Opener) ReadListed(p string, _ []byte) ([]byte, error) { return o.w.ReadFile(p) }
