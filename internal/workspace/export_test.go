package workspace

// MissingDirs lists the folders that writing p would have to create,
// outermost first.
func (w *Workspace) MissingDirs(p string) ([]string, error) {
	c, err := Clean(p)
	if err != nil {
		return nil, err
	}
	missing, _, err := w.missingDirs(p, c)
	return missing, err
}

// WriteFile writes a file as a one-file Batch does, refusing a path in a
// git folder (see CheckWrite), and returns the folders it made.
func (w *Workspace) WriteFile(p string, data []byte) ([]string, error) {
	if err := w.CheckWrite(p); err != nil {
		return nil, err
	}
	b := w.NewBatch()
	b.Write(p, string(data), 0)
	res := b.Commit()[0]
	return res.CreatedDirs, res.Err
}

// Remove deletes a file as a one-file Batch does, refusing a path in a git
// folder.
func (w *Workspace) Remove(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	if err := w.protect(p, c, false); err != nil {
		return err
	}
	b := w.NewBatch()
	b.Remove(p)
	return b.Commit()[0].Err
}
