cpdef list recreate_commands(bytes key, object value)
