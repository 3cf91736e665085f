/* Prints the row of interpose/carry/python-layout.c for the CPython whose headers
 * it is compiled against:
 *   cc -DPy_BUILD_CORE -I PREFIX/include/python3.X layout-dump.c
 * The rows of that table are this program's output, and the test
 * 'python-layout' (layout-check.py) compiles it against every installed
 * interpreter and checks that its row is in the table verbatim. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The bits of PyASCIIObject.state that one bit-field sets. */
#define STATE_BITS(field, value)                                                               \
	({                                                                                     \
		PyASCIIObject o;                                                               \
		memset(&o, 0, sizeof(o));                                                      \
		o.state.field = (value);                                                       \
		uint32_t w;                                                                    \
		memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), sizeof(w));            \
		w;                                                                             \
	})

static unsigned shift_of(uint32_t mask)
{
	return (unsigned)__builtin_ctz(mask);
}

int main(void)
{
	printf("{ .minor = %d, ", PY_MINOR_VERSION);
#if PY_VERSION_HEX < 0x030B0000
	printf(".frame_kind = MT_PY_FRAME_OBJECT, ");
	printf(".tstate_frame = %zu, .cframe_frame = -1, ", offsetof(PyThreadState, frame));
	printf(".frame_back = %zu, .frame_code = %zu, .frame_instr = %zu, ",
	       offsetof(PyFrameObject, f_back), offsetof(PyFrameObject, f_code),
	       offsetof(PyFrameObject, f_lasti));
	printf(".frame_owner = -1, .frame_is_entry = -1, .owner_cstack = -1, "
	       ".owner_generator = -1, ");
#if PY_VERSION_HEX >= 0x030A0000
	printf(".lasti_scale = %zu, ", sizeof(_Py_CODEUNIT)); /* f_lasti counts code units */
#else
	printf(".lasti_scale = 1, "); /* f_lasti counts bytes */
#endif
	printf(".code_qualname = -1, .code_adaptive = -1, .code_firsttraceable = -1, ");
#else
	printf(".frame_kind = MT_PY_FRAME_INTERP, ");
#if PY_VERSION_HEX >= 0x030D0000
	printf(".tstate_frame = %zu, .cframe_frame = -1, ",
	       offsetof(PyThreadState, current_frame));
	printf(".frame_back = %zu, .frame_code = %zu, .frame_instr = %zu, ",
	       offsetof(_PyInterpreterFrame, previous),
	       offsetof(_PyInterpreterFrame, f_executable),
	       offsetof(_PyInterpreterFrame, instr_ptr));
#else
	printf(".tstate_frame = %zu, .cframe_frame = %zu, ", offsetof(PyThreadState, cframe),
	       offsetof(_PyCFrame, current_frame));
	printf(".frame_back = %zu, .frame_code = %zu, .frame_instr = %zu, ",
	       offsetof(_PyInterpreterFrame, previous), offsetof(_PyInterpreterFrame, f_code),
	       offsetof(_PyInterpreterFrame, prev_instr));
#endif
	printf(".frame_owner = %zu, ", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030C0000
	printf(".frame_is_entry = %zu, .owner_cstack = -1, ",
	       offsetof(_PyInterpreterFrame, is_entry));
#else
	printf(".frame_is_entry = -1, .owner_cstack = %d, ", FRAME_OWNED_BY_CSTACK);
#endif
	printf(".owner_generator = %d, ", FRAME_OWNED_BY_GENERATOR);
	printf(".lasti_scale = %zu, ", sizeof(_Py_CODEUNIT));
	printf(".code_qualname = %zu, .code_adaptive = %zu, .code_firsttraceable = %zu, ",
	       offsetof(PyCodeObject, co_qualname), offsetof(PyCodeObject, co_code_adaptive),
	       offsetof(PyCodeObject, _co_firsttraceable));
#endif
	printf(".code_filename = %zu, .code_name = %zu, .code_firstlineno = %zu, ",
	       offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_name),
	       offsetof(PyCodeObject, co_firstlineno));
	printf(".str_length = %zu, .str_state = %zu, .str_ascii_size = %zu, "
	       ".str_compact_size = %zu, ",
	       offsetof(PyASCIIObject, length), offsetof(PyASCIIObject, state),
	       sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject));
	uint32_t kind = STATE_BITS(kind, 7);
	printf(".str_kind_shift = %u, .str_kind_mask = 0x%x, .str_compact_bit = 0x%x, "
	       ".str_ascii_bit = 0x%x },\n",
	       shift_of(kind), kind >> shift_of(kind), STATE_BITS(compact, 1),
	       STATE_BITS(ascii, 1));
	return 0;
}
