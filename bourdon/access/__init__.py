"""Access: visibility levels, who may do what (policy), members and their tokens, the audit log,
and secret redaction.
"""
