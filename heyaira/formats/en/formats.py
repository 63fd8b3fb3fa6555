# Times are stored and shown in UTC (TIME_ZONE); the zone is printed with every time so that
# nobody reads 09:00 UTC as their own 09:00. The same shape as the web pages' times.
DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
