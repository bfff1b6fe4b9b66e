/* Console (ops table).  Output is byte-oriented and blocking; input is
 * optional (NULL getc on boards without it). */
#ifndef HAL_CONSOLE_H
#define HAL_CONSOLE_H

struct hal_console_ops {
	void (*putc)(char c);
	int (*getc)(void);   /* -1 when nothing is pending */
};

#endif
