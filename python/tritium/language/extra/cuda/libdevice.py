"""`triton.language.extra.cuda.libdevice`: the functions of extra/libdevice.py."""
from ..libdevice import *  # noqa: F401,F403
from ..libdevice import FUNCTIONS, __all__  # noqa: F401
