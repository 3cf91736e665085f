/* The layouts of CPython's thread state, frames, code objects and strings,
 * per minor version. Each row is the output of tests/python/layout-dump.c
 * compiled against that version's installed headers (with Py_BUILD_CORE
 * for the internal ones); the 'python-layout' test recompiles it against
 * every interpreter it finds and fails when its row is not here verbatim.
 * To support a new version: run layout-dump against its headers, add the
 * row, and read docs/python.md for what else to check (the frame chain and
 * entry-frame rules in python.c). */
#include "python-layout.h"

#include <stddef.h>

static const struct mt_py_layout layouts[] = {
	/* clang-format off */
{ .minor = 8, .frame_kind = MT_PY_FRAME_OBJECT, .tstate_frame = 24, .cframe_frame = -1, .frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = -1, .frame_is_entry = -1, .owner_cstack = -1, .owner_generator = -1, .lasti_scale = 1, .code_qualname = -1, .code_adaptive = -1, .code_firsttraceable = -1, .code_filename = 104, .code_name = 112, .code_firstlineno = 40, .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
{ .minor = 9, .frame_kind = MT_PY_FRAME_OBJECT, .tstate_frame = 24, .cframe_frame = -1, .frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = -1, .frame_is_entry = -1, .owner_cstack = -1, .owner_generator = -1, .lasti_scale = 1, .code_qualname = -1, .code_adaptive = -1, .code_firsttraceable = -1, .code_filename = 104, .code_name = 112, .code_firstlineno = 40, .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
{ .minor = 10, .frame_kind = MT_PY_FRAME_OBJECT, .tstate_frame = 24, .cframe_frame = -1, .frame_back = 24, .frame_code = 32, .frame_instr = 96, .frame_owner = -1, .frame_is_entry = -1, .owner_cstack = -1, .owner_generator = -1, .lasti_scale = 2, .code_qualname = -1, .code_adaptive = -1, .code_firsttraceable = -1, .code_filename = 104, .code_name = 112, .code_firstlineno = 40, .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
{ .minor = 11, .frame_kind = MT_PY_FRAME_INTERP, .tstate_frame = 56, .cframe_frame = 8, .frame_back = 48, .frame_code = 32, .frame_instr = 56, .frame_owner = 69, .frame_is_entry = 68, .owner_cstack = -1, .owner_generator = 1, .lasti_scale = 2, .code_qualname = 128, .code_adaptive = 184, .code_firsttraceable = 168, .code_filename = 112, .code_name = 120, .code_firstlineno = 72, .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
{ .minor = 12, .frame_kind = MT_PY_FRAME_INTERP, .tstate_frame = 56, .cframe_frame = 0, .frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70, .frame_is_entry = -1, .owner_cstack = 3, .owner_generator = 1, .lasti_scale = 2, .code_qualname = 128, .code_adaptive = 192, .code_firsttraceable = 176, .code_filename = 112, .code_name = 120, .code_firstlineno = 68, .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
{ .minor = 13, .frame_kind = MT_PY_FRAME_INTERP, .tstate_frame = 72, .cframe_frame = -1, .frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70, .frame_is_entry = -1, .owner_cstack = 3, .owner_generator = 1, .lasti_scale = 2, .code_qualname = 128, .code_adaptive = 200, .code_firsttraceable = 184, .code_filename = 112, .code_name = 120, .code_firstlineno = 68, .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56, .str_kind_shift = 2, .str_kind_mask = 0x7, .str_compact_bit = 0x20, .str_ascii_bit = 0x40 },
	/* clang-format on */
};

const struct mt_py_layout *mt_py_layout_find(unsigned major, unsigned minor)
{
	if (major != 3)
		return NULL;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
