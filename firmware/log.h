/* Console logging with levels.  Lines are "[seconds.micros] L: text". */
#ifndef FW_LOG_H
#define FW_LOG_H

#include <stdint.h>

#include "hal/console.h"
#include "hal/timer.h"

enum fw_log_level { FW_LOG_ERR, FW_LOG_WARN, FW_LOG_INFO, FW_LOG_DEBUG };

void fw_log_init(const struct hal_console_ops *con, const struct hal_timer_ops *timer);
void fw_log_set_level(enum fw_log_level lvl);
int fw_log_parse_level(const char *name, enum fw_log_level *out);
void fw_log(enum fw_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Unprefixed line: for fixed marker lines that scripts match. */
void fw_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define LOG_ERR(...)   fw_log(FW_LOG_ERR, __VA_ARGS__)
#define LOG_WARN(...)  fw_log(FW_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...)  fw_log(FW_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) fw_log(FW_LOG_DEBUG, __VA_ARGS__)

#endif
