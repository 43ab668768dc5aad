"""Status: health facts about a library and its readers, the reports built from them, and doctor."""
