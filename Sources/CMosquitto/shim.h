// libmosquitto: the MQTT client (connect, will, subscribe, publish, its network thread).
#include <mosquitto.h>
