"""(filled in by a later step)"""
