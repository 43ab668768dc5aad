"""Helpers the readers share, one job per module; readers import them, never each other.

- ``paths``: paths as stores record them (Windows or POSIX, relative, URIs);
- ``privacy``: the one private-path rule every reader applies;
- ``text``: prompts without harness wrappers, readable note text;
- ``frontmatter``: the one parser of the ``---`` block atop memory and rule files;
- ``gitconfig``: the repository around a folder, from its ``.git`` marker (never ``git``);
- ``files``: store roots, folder listings, memory and rule files as notes;
- ``tools``: the files a tool call edits;
- ``sqlite``: reading a live SQLite store without writing beside it;
- ``memory``: Markdown memory files as entities and notes (Claude Code, Codex);
- ``facts``: session facts to rows, projects named by repository (Claude Code, Codex);
- ``assembly``: drafts to rows, projects named by folder (the IDE and CLI readers).
- ``clinetasks``: Cline-family task folders and rules files (Cline, Roo Code, Kilo Code);
- ``jsonc``: VS Code's settings files (JSON with comments);
- ``geminichats``: what Gemini CLI and Qwen Code write alike (parts, edit tools, memory).
"""
