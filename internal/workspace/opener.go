package workspace

// Opener is the pack's reader, reading each file as ReadFile does; what
// once tuned it (folders held open, buffers) is unused.
type Opener struct{ w *Workspace }

func (w *Workspace) NewOpener(int) *Opener                       { return &Opener{w: w} }
func (o *Opener) Close()                                         {}
func (o *Opener) ReadRegular(p string, _ []byte) ([]byte, error) { return o.w.ReadFile(p) }
func (o *Opener) ReadListed(p string, _ []byte) ([]byte, error)  { return o.w.ReadFile(p) }
