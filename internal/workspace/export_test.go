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
