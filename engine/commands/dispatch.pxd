from engine.commands.context cimport CommandContext

cpdef object resolve(list argv)
cpdef object check(object spec, list argv)
cpdef object dispatch(CommandContext ctx, list argv)
cpdef list to_argv(tuple args)
cpdef void drain_expired(CommandContext ctx)
