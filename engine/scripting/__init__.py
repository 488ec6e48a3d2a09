"""Server-side scripting: Lua 5.1 sandboxed as Redis runs it (the runtime the EVAL and FCALL
commands sit on). May import engine.core, engine.resp and engine.commands only."""
from engine.scripting.errors import ScriptFailure, script_error_text
from engine.scripting.runtime import ScriptRuntime

__all__ = ["ScriptRuntime", "ScriptFailure", "script_error_text"]
