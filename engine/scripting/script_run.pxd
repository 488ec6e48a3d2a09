cpdef object run_script(object runtime, object fn, list keys, list args, str name)
