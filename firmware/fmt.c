#include "fmt.h"

#include <stdint.h>

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->cap && o->len < o->cap - 1)
		o->buf[o->len] = c;
	o->len++;
}

static void put_field(struct out *o, const char *s, size_t n, unsigned width,
		      int left, char pad)
{
	size_t i;

	if (!left)
		for (i = n; i < width; i++)
			put(o, pad);
	for (i = 0; i < n; i++)
		put(o, s[i]);
	if (left)
		for (i = n; i < width; i++)
			put(o, ' ');
}

static size_t utoa(char *tmp, uint64_t v, unsigned base, int upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	return n;
}

int fw_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, cap, 0 };

	for (; *fmt; fmt++) {
		char tmp[24], num[24];
		unsigned width = 0, base = 10;
		int left = 0, lng = 0, neg = 0, upper = 0;
		char pad = ' ';
		uint64_t v;
		size_t n, i;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = 1;
			else if (*fmt == '0')
				pad = '0';
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (unsigned)(*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			/* size_t is as wide as long on every ABI we build for
			 * (ILP32 A32, LP64 A64 and x86-64). */
			lng += 1;
			fmt++;
		}
		_Static_assert(sizeof(size_t) == sizeof(long), "%z handled as %l");
		switch (*fmt) {
		case '\0':
			fmt--;
			continue;
		case '%':
			put(&o, '%');
			continue;
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_field(&o, tmp, 1, width, left, ' ');
			continue;
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			for (n = 0; s[n]; n++)
				;
			put_field(&o, s, n, width, left, ' ');
			continue;
		}
		case 'd':
		case 'i': {
			int64_t sv;

			if (lng >= 2)
				sv = va_arg(ap, long long);
			else if (lng == 1)
				sv = va_arg(ap, long);
			else
				sv = va_arg(ap, int);
			neg = sv < 0;
			v = neg ? (uint64_t)0 - (uint64_t)sv : (uint64_t)sv;
			break;
		}
		case 'p':
			v = (uintptr_t)va_arg(ap, void *);
			base = 16;
			put(&o, '0');
			put(&o, 'x');
			break;
		case 'X':
			upper = 1;
			/* fall through */
		case 'x':
			base = 16;
			/* fall through */
		case 'u':
			if (lng >= 2)
				v = va_arg(ap, unsigned long long);
			else if (lng == 1)
				v = va_arg(ap, unsigned long);
			else
				v = va_arg(ap, unsigned int);
			break;
		default:
			/* Unknown conversion: print it verbatim rather than guess
			 * at the argument list. */
			put(&o, '%');
			put(&o, *fmt);
			continue;
		}
		n = utoa(tmp, v, base, upper);
		i = 0;
		if (neg)
			num[i++] = '-';
		while (n)
			num[i++] = tmp[--n];
		if (neg && pad == '0' && !left) {
			put(&o, '-');
			put_field(&o, num + 1, i - 1, width ? width - 1 : 0, 0, '0');
		} else {
			put_field(&o, num, i, width, left, left ? ' ' : pad);
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return (int)o.len;
}

int fw_snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fw_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}
