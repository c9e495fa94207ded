package doctor

func checkCoalesce(e *env) Check {
	return Check{Title: "checkCoalesce", Status: Warn, Evidence: []string{"not built yet"}}
}                                            // TODO(helper)
func fixCoalesce(e *env, j *journaler) error { return nil } // TODO(helper)
