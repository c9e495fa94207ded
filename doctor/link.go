package doctor

func checkLink(e *env) Check {
	return Check{Title: "checkLink", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
