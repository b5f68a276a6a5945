"""`triton.language.extra.hip.libdevice`: the functions of extra/libdevice.py
(the AMDGPU target rejects a call it cannot lower with an error naming it)."""
from ..libdevice import *  # noqa: F401,F403
from ..libdevice import FUNCTIONS, __all__  # noqa: F401
