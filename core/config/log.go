// The log file keys and their checks: where the logs go besides stderr and
// how the file is rotated.

package config

import (
	"strings"
)

// Keys of the log file (rocketns's own).
const (
	KeyLogFile       = "logFile"
	KeyLogMaxSizeMB  = "logMaxSizeMB"
	KeyLogMaxAgeDays = "logMaxAgeDays"
	KeyLogMaxBackups = "logMaxBackups"
	KeyLogCompress   = "logCompress"
	KeyStrictConfig  = "strictConfig"
)

// validateLog checks the log file's path (the table has the ranges).
func (c *Config) validateLog() []error {
	var errs []error
	if strings.HasPrefix(strings.TrimSpace(c.LogFile), "~") {
		// Neither Java nor rocketns expands it: the log would land in a
		// directory named "~" below the working directory.
		errs = append(errs, c.invalid(KeyLogFile, "'~' is not expanded here: write the absolute path (/home/rocketmq/logs/rocketmqlogs/namesrv.log)"))
	}
	return errs
}
